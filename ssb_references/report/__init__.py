"""ssb-references report: tables and plots of a system's runs."""
