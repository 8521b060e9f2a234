"""The profile page: the Starlette app, its server, page data and charts."""
