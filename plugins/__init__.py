"""Built-in rule variants, each a plugin of the ``arena`` entry-point group, like a third-party one.

May import: ``engine`` only.
"""
