"""Development tools of the repository (not part of any installed distribution)."""
