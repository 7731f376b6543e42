"""Root's side: `vtopo agent`, the only vtopo process that changes the host. It serves the command line and the
designer, one request per connection, identified by the kernel; its policy limits what a member may ask."""
