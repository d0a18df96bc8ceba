//! Single-zero roulette: placements, layout validation, limits and settlement (in progress).
