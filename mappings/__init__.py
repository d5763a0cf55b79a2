"""hipport's data: generated API tables (``api/*.json``) and curated TOML.

A package only so that ``importlib.resources.files("hipport.mappings")`` finds the files
in an installed wheel and in the editable checkout alike; it holds no code.
"""
