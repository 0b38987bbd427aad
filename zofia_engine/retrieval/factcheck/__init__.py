"""Published fact-check lookup backends (ClaimReview)."""
