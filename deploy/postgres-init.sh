#!/bin/sh
# Run once by the postgres image on a fresh volume (/docker-entrypoint-initdb.d): BigMind's own
# role, a plain one (NOSUPERUSER NOBYPASSRLS: row-level security binds it), owning its database.
# The image's POSTGRES_USER (postgres) stays the only superuser. docs/privacy-postgres.md.
set -eu
psql -v ON_ERROR_STOP=1 -v pw="$POSTGRES_PASSWORD" --username "$POSTGRES_USER" --dbname postgres <<'SQL'
CREATE ROLE bigmind LOGIN NOSUPERUSER NOBYPASSRLS PASSWORD :'pw';
CREATE DATABASE bigmind OWNER bigmind;
\c bigmind
CREATE EXTENSION IF NOT EXISTS vector;
SQL
