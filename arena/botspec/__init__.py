"""What a bot is, as its author typed it: one meaning of a bot command everywhere.

Every command that starts a bot -- ``arena play``, ``check-bot``, ``match``, ``run``,
``solo``, ``league add``, ``serve``, the cluster's bundles -- goes through this package:

- :mod:`.command` -- a command line's words resolved against the folder it was typed in
  (or a YAML file's folder): wrappers (``env``, ``nice``, ``stdbuf``, ``timeout``,
  ``taskset``, a shell's ``-c``) seen through to the program they start, the program found
  on the ``PATH``, an interpreter's shim (pyenv, asdf, rbenv) resolved to the interpreter
  that really runs, and the files a bot needs to see (its program's folder, its
  interpreter's installation, the arena's own packages for the arena's own interpreter,
  what it declared with ``program_dir`` and ``read_only``);
- :mod:`.shims` -- an interpreter's shim (pyenv, asdf, rbenv) and the interpreter it
  runs, for reading a command and for choosing what the sandbox shows alike;
- :mod:`.spec` -- a bot's spec (name, registered bot or command, folder, options, time
  control), written alike on the command line (``name=v2 cmd="python v2/bot.py" st=500ms
  option.depth=3``) and in a YAML file, its name checked, and distinct names for bots typed
  with the same file name;
- :mod:`.outputs` -- what no bot is shown inside the folders it sees: the arena's output
  folders of every run (marked by :func:`~.outputs.mark_output` as the writers create them,
  or known by their files) and version-control metadata.

It sits below the process layer (the sandbox asks it what a bot must see), the
tournament, league, web and cluster layers, and imports only :mod:`arena.errors`.
"""

from .command import CommandError, anchor, locate, split
from .view import loose_folders, needed_paths, program_files
from .wrappers import script_of
from .spec import BotSpec, NameError_, check_name, command_line, distinct_names, from_mapping, parse_spec

__all__ = ["BotSpec", "CommandError", "NameError_", "anchor", "check_name", "command_line", "distinct_names",
           "from_mapping", "locate", "loose_folders", "needed_paths", "parse_spec", "program_files", "script_of",
           "split"]
