"""Report renderers: one module per format, all taking the same Report value."""
