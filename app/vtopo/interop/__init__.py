"""Labs from other tools and back: containerlab topologies and GNS3 projects read into vtopo labs, and vtopo labs
written as containerlab topologies. Between the front ends (CLI, designer) and the model; pure but for reading the
files a topology names, from its own folder (see folder.py)."""
