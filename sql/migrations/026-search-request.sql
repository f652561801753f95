-- What one search statement runs with, as one value: brain.search builds the
-- statement from fragment functions (brain._search_statement and its legs)
-- and runs it with this as its only parameter, $1, whose fields the fragments
-- name (($1).kinds, ($1).workspace_id). Before, the statement took 32
-- positional parameters whose order was written out five times.
CREATE TYPE brain.search_request AS (
    -- the query as given, its embedding in the search's space, the words the lexical leg looks for
    query text,
    embedding public.vector,
    tsq tsquery,
    -- the caller's filters
    kinds text[],
    categories text[],
    project text,
    tags text[],
    people text[],
    created_after timestamptz,
    created_before timestamptz,
    include_superseded boolean,
    include_archived boolean,
    as_of timestamptz,
    clock timestamptz,
    source_system text,
    source_ref text,
    -- the caller's workspace (brain._caller_workspace) and the page
    workspace_id bigint,
    max_results integer,
    neighbours integer,
    min_relevance double precision,
    -- the workspace's settings the statement reads as values
    rrf_k double precision,
    skill_trigger_max integer,
    vector_min_similarity double precision,
    -- the query's words as the lexical leg weighs them (brain.lexical_terms), each
    -- with its words for the same thing: headline and body, context, idf
    words_ab tsquery[],
    words_c tsquery[],
    words_idf double precision[],
    -- BM25's k1, b, average memory length, context weight, the query's idf sum, and
    -- that sum with the words no memory holds
    bm25 double precision[],
    -- brain.relevance's calibration, then exact_token_relevance
    calibration double precision[],
    -- the memories selective filters keep, when few enough to rank exactly
    kept_ids bigint[],
    -- the tokens a short query names verbatim (brain.exact_tokens)
    exact text[]
);
COMMENT ON TYPE brain.search_request IS
    'The one parameter of the statement brain.search builds (brain._search_statement): the query, its embedding and words, the caller''s filters, the workspace and the settings the statement reads. Internal to search.';
