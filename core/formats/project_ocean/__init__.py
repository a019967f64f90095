"""project_ocean."""
