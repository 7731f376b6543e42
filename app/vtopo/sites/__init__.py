"""Labs spread over several machines (sites): each site's agent deploys its part, reached over OpenSSH, and links
between sites become VXLAN tunnels (see docs/sites.md)."""
