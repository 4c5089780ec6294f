"""The ssb-references command: its subcommands and the options they share."""
