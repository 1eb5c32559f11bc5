"""One module per ``hare-opt`` sub-command (discovered by ``hare_opt.cli.main``)."""
