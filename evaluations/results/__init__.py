"""Results that come from elsewhere: a paper's published figures, human experts' score logs."""
