"""Reading trial folders, trajectories and archives into plain data (no Django)."""
