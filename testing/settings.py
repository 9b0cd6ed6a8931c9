"""The site's settings as the tests run them: everything as `hookbridge_site.settings` makes it, but for the
password hasher.

Django's own advice for quick tests (docs "Speeding up the tests"): PBKDF2 at a million rounds costs 0.2 s of
CPU a hash, and the suite makes and logs in hundreds of people, in its own process and in every server it
starts; that was a third of the unit tests' CPU. The benchmarks run the real settings (bench.servers).
"""

from __future__ import annotations

from hookbridge_site.settings import *  # noqa: F403  (the site's settings, whole)

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
