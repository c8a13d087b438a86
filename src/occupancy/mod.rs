//! Analytical occupancy model.
