"""Dropping this process's database connections, whatever state they are in."""

from django.db import DatabaseError, connections


def close_connections() -> None:
    """Close every database connection of this thread (a broken one after a server restart, one left
    mid-exchange by an interrupted query, or before a fork so that parent and child never share a socket);
    the next query opens a new one."""
    for conn in connections.all(initialized_only=True):
        try:
            conn.close()
        except DatabaseError:
            conn.connection = None
