"""The league website: bot packages, submissions, and ``arena serve``.

Owns: the bot package format (``bot.toml``, safe unpacking, packing for ``arena submit``:
:mod:`.package`), building and checking a submitted bot in the sandbox (:mod:`.build`),
authors' tokens and submissions, kept in tables of their own in the league's SQLite file
(:mod:`.store`), the pipeline from upload to ladder (:mod:`.submissions`), the background
player that keeps league games going (:mod:`.player`), the pages (:mod:`.pages`,
:mod:`.site_pages`, :mod:`.chart`, from the data of :mod:`.views` and :mod:`.history`), an
author's own page (:mod:`.author`), games followed while they play (:mod:`.live`,
:mod:`.follow`; what a stranger sees of them, :mod:`.spectator`), what keeps them whole (:mod:`.security`) and the Starlette app (:mod:`.app`,
:mod:`.api`); what keeps
it up in operation: the ratings refitted in the background (:mod:`.ratings`), a short-lived
cache of public answers (:mod:`.cache`) and the ending of what a killed server left
(:mod:`.lifetime`). See ``docs/leagues.md`` and
``docs/writing-a-bot.md``.

May import: :mod:`arena.league`, :mod:`arena.process`, :mod:`arena.replay`,
:mod:`arena.tournament`, :mod:`arena.errors` and ``engine``. Starlette and uvicorn are
imported only by :mod:`.app` and the modules only it imports (:mod:`.api`, :mod:`.withdrawal`,
:mod:`.author`, :mod:`.follow`, :mod:`.security`)
(the ``web`` extra), so the rest works without them.
"""
