"""The op table (``table``), its machinery (``_core``, ``dispatch``) and the public functions."""
