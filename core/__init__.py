"""The ground floor: what every app shares (env helpers, signals, broadcast, the base consumer, db, formatting).

It imports no app, and nothing but Django, Channels and the libraries; the site shell
(hookbridge_site: settings, asgi, urls) sits on top of every app.
"""
