"""Built-in rule variants. Each module is a plugin registered like a third-party one."""
