"""The privileged agent: the only vtopo process that changes the host, serving the CLI and the designer."""
