"""The bottom layer: helpers every layer may use and that import nothing else of hare_opt."""
