"""The `hindsight-tools` command line."""
