"""The PostgreSQL store: schema bootstrap, migrations, pools and the embedded server."""
