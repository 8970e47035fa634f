"""The league website: submissions and ``arena serve``.

Owns: authors' tokens and submissions, kept in tables of their own in the league's SQLite
file (:mod:`.store`), the pipeline from upload to ladder (:mod:`.submissions`: a package is
unpacked, built and checked in the sandbox by :mod:`arena.packages`), the background
player that keeps league games going (:mod:`.player`), the pages (:mod:`.pages`,
:mod:`.site_pages`, :mod:`.chart`, from the data of :mod:`.views` and :mod:`.history`, every
game read once by :mod:`.games`), games followed while they play (:mod:`.live`; what a
stranger sees of them, :mod:`.spectator`), what keeps them whole (:mod:`.security`) and the
Starlette app (:mod:`.app`): one module of routes per concern (the public pages
:mod:`.public_pages`, uploads :mod:`.uploads`, an author's own page :mod:`.author`, games in
flight :mod:`.follow`, the JSON API :mod:`.api`, withdrawing :mod:`.withdrawal`) over the
site's state (:mod:`.state`), what a request sends read by :mod:`.reading`, the middleware
(:mod:`.middleware`) and the app's lifetime (:mod:`.lifetime`); what keeps it up in
operation: the ratings refitted in the background (:mod:`.ratings`), a short-lived cache of
public answers (:mod:`.cache`), the connections' limits (:mod:`.connections`) and the ending
of what a killed server left (:mod:`.lifetime`). See ``docs/leagues.md`` and
``docs/writing-a-bot.md``.

May import: :mod:`arena.league`, :mod:`arena.packages`, :mod:`arena.process`, :mod:`arena.replay`,
:mod:`arena.tournament`, :mod:`arena.errors` and ``engine``. Starlette and uvicorn are
imported only by :mod:`.app` and the modules only it imports (its routes' modules,
:mod:`.state`, :mod:`.reading`, :mod:`.middleware`, :mod:`.security`, and
:mod:`.connections` for the command line) (the ``web`` extra), so the rest works without them.
"""
