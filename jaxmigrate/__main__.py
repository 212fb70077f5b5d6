"""``python -m jaxmigrate``: the command line."""

from jaxmigrate.migrator.cli import command

command()
