-- Search finds what people type (issue 31).
--
-- A search result marks a hit that a newer memory among the results may
-- contradict: the same kind and project, as near as the embedding space's
-- `related` similarity, differing in distinguishing terms only (a number, a
-- version, a name: "Node.js runtime is version 20" and "... version 22").
-- brain.search fills it (sql/functions/006-search.sql).
ALTER TYPE brain.search_result ADD ATTRIBUTE newer_related bigint;
COMMENT ON COLUMN brain.search_result.newer_related IS
    'A newer memory among the results that may contradict this one (same kind and project, related, differing in distinguishing terms only); NULL otherwise.';
