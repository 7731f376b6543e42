"""vtopo's built-in node kinds. Each module is one kind; they register through the `vtopo.kinds` entry points."""
