"""Built-in bots. Each module is a policy that can play in-process or as a protocol bot."""
