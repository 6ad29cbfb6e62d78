"""The scripts are programs to run, not test modules: pytest (and --doctest-modules) leaves
them alone."""

collect_ignore_glob = ["scripts/*"]
