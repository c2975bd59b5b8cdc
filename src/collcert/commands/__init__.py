"""Subcommands of the ``collcert`` CLI, one module each (see ``collcert.cli``)."""
