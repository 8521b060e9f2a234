"""The ``bigmind`` command line."""
