-- The prompt hook brings up what search's "nothing relevant" verdict finds
-- relevant (the setting min_relevance, brain.search's floor), no longer the
-- hits whose own relevance reaches a floor of its own (issue 27): the setting
-- prompt_context_min_relevance is gone, and so are its overrides.
DELETE FROM brain.setting WHERE name = 'prompt_context_min_relevance';

-- Each result carries its part of the verdict: its relevance with the query's
-- words no memory holds counted (what min_relevance is compared with), so that
-- a caller that leaves results out (the prompt hook: the calling session's own
-- turns, flagged memories) asks the same question of the rest.
ALTER TYPE brain.search_result ADD ATTRIBUTE verdict real;
COMMENT ON COLUMN brain.search_result.verdict IS
    'The result''s relevance with the query''s words that no memory holds counted: search returns nothing unless some candidate''s verdict reaches min_relevance. NULL for a neighbour and a skill the ranking did not score.';
