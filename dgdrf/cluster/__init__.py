"""Network mode: the same actors as separate processes (or containers) over aiohttp.

``membership`` is the bootstrap's control plane (join, directory, failure detection),
``node`` runs one process's actors (``dgdrf node``), ``launcher`` starts a whole cluster
on loopback (``dgdrf cluster up``).
"""
