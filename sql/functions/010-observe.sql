-- Observed memories, their text: each gets a derived headline; long text is
-- split into chunks that share a source_ref, cut along its markdown and sized
-- in the embedder's tokens. The write: 010a-observe-batch.sql.

-- The first max_words words of a line whose words are separated by single spaces.
CREATE OR REPLACE FUNCTION brain._first_words(line text, max_words integer)
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
    SELECT CASE WHEN length(line) - length(replace(line, ' ', '')) < max_words THEN line
                ELSE substring(line FROM '^[^ ]*(?: [^ ]*){' || (max_words - 1) || '}') || ' …' END
$$;

CREATE OR REPLACE FUNCTION brain.derive_headline(t text, max_words integer DEFAULT 12)
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
    SELECT brain._first_words(
        brain.trim_space(regexp_replace(split_part(brain.trim_space(coalesce(t, '')), E'\n', 1), '\s+', ' ', 'g')),
        max_words)
$$;
COMMENT ON FUNCTION brain.derive_headline IS
    'A headline for observed text: the first line''s first max_words words, with an ellipsis when cut.';

-- A conservative estimate of the tokens a BERT WordPiece tokenizer (the
-- tokenizer of all-MiniLM-L6-v2, nomic-embed-text and mxbai-embed-large)
-- makes of t, special tokens left out. That tokenizer cuts at white space and
-- at every punctuation character, then splits each word into the longest word
-- pieces of its vocabulary. So here:
-- - every character that is not an ASCII letter, digit or space counts one:
--   punctuation is one token each, and any other character (accented, Cyrillic,
--   CJK, emoji) is at most one piece once accents are stripped; a Hangul
--   syllable decomposes into up to three jamo and counts three;
-- - a run of ASCII letters and digits counts by its shape: a word
--   (lowercase, Capitalized or UPPERCASE) one plus one per three letters, or
--   one per letter when it has no vowel (cmd, gcc); camelCase one per hump plus
--   one per three letters; digits one plus three per four after the first;
--   letters mixed with digits (hashes, ids, base64) one per character, which
--   no word piece can beat.
-- tests/test_chunking.py checks the estimate against the real MiniLM
-- tokenizer on prose, markdown, code, logs, tables, URLs and non-English
-- text: it never falls below the true count (prose is overestimated by
-- about a third).
CREATE OR REPLACE FUNCTION brain.wordpiece_tokens(t text)
RETURNS integer
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
    -- (translate and lower per run: a regular expression per run cost three
    -- times as long, and counting each class with a regular expression over
    -- the whole text more)
    SELECT (SELECT coalesce(sum(CASE
                WHEN w = '' THEN 0
                WHEN translate(w, '0123456789', '') = '' THEN 1 + (length(w) - 1) * 3 / 4
                WHEN translate(w, 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ', '') <> '' THEN length(w)
                WHEN translate(w, 'aeiouyAEIOUY', '') = w THEN length(w)
                WHEN substr(w, 2) = lower(substr(w, 2)) OR w = upper(w) THEN 1 + length(w) / 3
                ELSE regexp_count(w, '[A-Z]+(?![a-z])|[A-Z]?[a-z]+') + length(w) / 3 END), 0)::integer
            FROM unnest(regexp_split_to_array(coalesce(t, ''), '[^A-Za-z0-9]+')) AS w)
           + regexp_count(coalesce(t, ''), '[^A-Za-z0-9 \t\n\r\f\v]')
           + 2 * regexp_count(coalesce(t, ''), '[\uac00-\ud7a3]')
$$;
COMMENT ON FUNCTION brain.wordpiece_tokens IS
    'A conservative estimate of the tokens a BERT WordPiece tokenizer (all-MiniLM-L6-v2) makes of a text, special tokens left out: never below the true count on realistic text.';

-- The title as it is embedded with a memory's text (brain.embedding_input
-- with a title): white space folded, at most 24 estimated tokens, so that a
-- chunk cut 25 tokens shorter (brain._titled_chunk_tokens) still fits the
-- embedder's window with it. A longer title keeps its last path segments
-- (…/ingest/markdown.py), or else its first words; NULL when empty.
CREATE OR REPLACE FUNCTION brain._embedded_title(title text)
RETURNS text
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    t text := brain.trim_space(regexp_replace(coalesce(title, ''), '\s+', ' ', 'g'));
    rest text := t;
    c text;
BEGIN
    IF t = '' THEN
        RETURN NULL;
    END IF;
    IF brain.wordpiece_tokens(t) <= 24 THEN
        RETURN t;
    END IF;
    WHILE strpos(rest, '/') > 0 LOOP
        rest := substr(rest, strpos(rest, '/') + 1);
        c := '…/' || rest;
        IF rest <> '' AND brain.wordpiece_tokens(c) <= 24 THEN
            RETURN c;
        END IF;
    END LOOP;
    FOR n IN REVERSE 12 .. 1 LOOP
        c := brain._first_words(t, n);
        IF brain.wordpiece_tokens(c) <= 24 THEN
            RETURN c;
        END IF;
    END LOOP;
    RETURN NULL;
END
$$;

-- The chunk budget of a text embedded with a title: the budget less the
-- title's room (24 tokens and the ` > ` that joins it), never below 32.
CREATE OR REPLACE FUNCTION brain._titled_chunk_tokens(max_tokens integer, title text)
RETURNS integer
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
    SELECT CASE WHEN brain.trim_space(coalesce(title, '')) = '' THEN max_tokens
                ELSE greatest(32, max_tokens - 25) END
$$;

-- The headline of a chunk under headings: its heading path (Guide > Install >
-- Linux), the deepest headings that fit in 12 words, 200 characters and a
-- quarter of the chunk's token budget; NULL when not even the deepest does.
CREATE OR REPLACE FUNCTION brain._section_headline(path text[], max_tokens integer)
RETURNS text
LANGUAGE plpgsql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    h text;
BEGIN
    FOR i IN 1 .. coalesce(cardinality(path), 0) LOOP
        h := CASE WHEN i > 1 THEN '… > ' ELSE '' END || array_to_string(path[i:], ' > ');
        IF brain.word_count(h) <= 12 AND length(h) <= 200 AND brain.wordpiece_tokens(h) <= max_tokens / 4 THEN
            RETURN h;
        END IF;
    END LOOP;
    RETURN NULL;
END
$$;

-- A fenced code block or a table that is too long for one chunk, cut at lines
-- into parts that each fit room tokens: each part of a code block is fenced
-- again, each part of a table repeats its header. A line too long to fit
-- with them comes back alone, to be cut further.
CREATE OR REPLACE FUNCTION brain._split_block(lines text[], head_lines integer, fenced boolean, room integer)
RETURNS text[]
LANGUAGE plpgsql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    n integer := cardinality(lines);
    last_body integer := n - CASE WHEN fenced THEN 1 ELSE 0 END;
    head text := array_to_string(lines[1:head_lines], E'\n');
    tail text := CASE WHEN fenced THEN lines[n] END;
    frame integer := brain.wordpiece_tokens(head) + coalesce(brain.wordpiece_tokens(tail), 0);
    parts text[] := '{}';
    cur text[] := '{}';
    cur_tokens integer := 0;
    line_tokens integer;
BEGIN
    FOR i IN head_lines + 1 .. last_body LOOP
        line_tokens := brain.wordpiece_tokens(lines[i]);
        IF cardinality(cur) > 0 AND frame + cur_tokens + line_tokens > room THEN
            parts := parts || concat_ws(E'\n', head, array_to_string(cur, E'\n'), tail);
            cur := '{}'; cur_tokens := 0;
        END IF;
        IF frame + line_tokens > room THEN
            parts := parts || lines[i];
        ELSE
            cur := cur || lines[i];
            cur_tokens := cur_tokens + line_tokens;
        END IF;
    END LOOP;
    IF cardinality(cur) > 0 OR cardinality(parts) = 0 THEN
        parts := parts || concat_ws(E'\n', head, array_to_string(cur, E'\n'), tail);
    END IF;
    RETURN parts;
END
$$;

CREATE OR REPLACE FUNCTION brain.chunk_text(t text, max_tokens integer DEFAULT 256)
RETURNS TABLE (chunk integer, headline text, section text, body text)
LANGUAGE plpgsql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
#variable_conflict use_variable
DECLARE
    whole text := brain.trim_space(coalesce(t, ''));
    lines text[];
    nl integer;
    line text;
    fence text;
    i integer;
    j integer;
    -- the blocks: a heading line, a fenced code block, or a run of non-blank lines
    b_kind text[] := '{}';
    b_text text[] := '{}';
    b_level integer[] := '{}';
    b_title text[] := '{}';
    para text[] := '{}';
    -- the heading path and the headline it gives
    path text[] := array_fill(NULL::text, ARRAY[6]);
    sect_head text;
    sect_cost integer := 0;
    -- pieces still to place, as a stack (the next one last): text, separator
    -- from what comes before it, estimate (NULL until known), how it may be cut
    s_text text[] := '{}';
    s_sep text[] := '{}';
    s_tok integer[] := '{}';
    s_cut text[] := '{}';
    sp integer;
    rest_sep text;
    rest_cut text;
    finer text;
    p text;
    p_sep text;
    p_tok integer;
    p_cut text;
    parts text[];
    room integer;
    m integer;
    pos integer;
    -- the chunk being filled
    cur text;
    cur_tokens integer := 0;
    cur_content boolean := false;
    -- the chunks
    o_body text[] := '{}';
    o_head text[] := '{}';
    o_sect text[] := '{}';
BEGIN
    IF max_tokens IS NULL OR max_tokens < 32 OR max_tokens > 65536 THEN
        PERFORM brain._raise('BR009',
            'chunk_text takes max_tokens from 32 to 65536.',
            jsonb_build_object('field', 'max_tokens', 'type', 'integer'),
            'Give the tokens of text the embedder takes, e.g. max_tokens => 254 for all-MiniLM-L6-v2.');
    END IF;
    -- A text that fits is one chunk, headed by its own first line (the
    -- headline being the text's start, the embedding input is the text).
    -- First a bound that costs less than the estimate: no character counts
    -- more than one token, but for Hangul syllables.
    IF length(translate(whole, E' \t\n\r\f\v', '')) + 2 * regexp_count(whole, '[\uac00-\ud7a3]')
           <= max_tokens
       OR brain.wordpiece_tokens(whole) <= max_tokens THEN
        chunk := 1;
        headline := brain.derive_headline(whole);
        section := NULL;
        body := whole;
        RETURN NEXT;
        RETURN;
    END IF;

    -- 1. Blocks.
    lines := regexp_split_to_array(whole, '\r\n|\r|\n');
    nl := cardinality(lines);
    i := 1;
    WHILE i <= nl + 1 LOOP
        line := coalesce(lines[i], '');  -- (past the last line, a blank one: it ends the last paragraph)
        fence := substring(line FROM '^\s*(`{3,}|~{3,})');
        IF line ~ '^\s*$' OR fence IS NOT NULL OR line ~ '^ {0,3}#{1,6}(\s|$)'
           OR cardinality(para) = 1 AND line ~ '^ {0,3}(=+|-+)\s*$' AND para[1] !~ '^\s*([-*+]|\d+[.)])\s' THEN
            IF cardinality(para) = 1 AND line ~ '^ {0,3}(=+|-+)\s*$' AND fence IS NULL THEN
                -- a Setext heading: its text underlined with = (level 1) or - (level 2)
                b_kind := b_kind || 'heading'::text;
                b_text := b_text || (para[1] || E'\n' || line);
                b_level := b_level || CASE WHEN line ~ '=' THEN 1 ELSE 2 END;
                b_title := b_title || brain.trim_space(regexp_replace(para[1], '\s+', ' ', 'g'));
                para := '{}';
                i := i + 1;
                CONTINUE;
            END IF;
            IF cardinality(para) > 0 THEN
                b_kind := b_kind || 'text'::text;
                b_text := b_text || array_to_string(para, E'\n');
                b_level := b_level || NULL::integer;
                b_title := b_title || NULL::text;
                para := '{}';
            END IF;
            IF fence IS NOT NULL THEN
                -- to its closing fence (the same character, at least as many), or the end
                j := i + 1;
                WHILE j <= nl AND lines[j] !~ ('^\s*' || left(fence, 1) || '{' || length(fence) || ',}\s*$') LOOP
                    j := j + 1;
                END LOOP;
                b_kind := b_kind || CASE WHEN j <= nl THEN 'code' ELSE 'open code' END;
                b_text := b_text || array_to_string(lines[i:least(j, nl)], E'\n');
                b_level := b_level || NULL::integer;
                b_title := b_title || NULL::text;
                i := j + 1;
                CONTINUE;
            ELSIF line !~ '^\s*$' THEN
                b_kind := b_kind || 'heading'::text;
                b_text := b_text || line;
                b_level := b_level || length(substring(line FROM '^ {0,3}(#{1,6})'));
                b_title := b_title || brain.trim_space(regexp_replace(
                    regexp_replace(line, '^ {0,3}#{1,6}|\s#+\s*$', '', 'g'), '\s+', ' ', 'g'));
            END IF;
        ELSE
            para := para || line;
        END IF;
        i := i + 1;
    END LOOP;

    -- 2. Chunks: blocks while they fit; a heading starts a chunk; a block
    --    that fits no chunk is cut at lines, then sentences, then words,
    --    then characters.
    FOR k IN 1 .. cardinality(b_kind) LOOP
        IF b_kind[k] = 'heading' THEN
            IF cur_content THEN
                o_body := o_body || brain.trim_space(cur);
                o_head := o_head || coalesce(sect_head, brain.derive_headline(brain.trim_space(cur)));
                o_sect := o_sect || nullif(array_to_string(path, ' > '), '');
                cur := NULL; cur_tokens := 0; cur_content := false;
            END IF;
            path[b_level[k]] := nullif(b_title[k], '');
            FOR l IN b_level[k] + 1 .. 6 LOOP
                path[l] := NULL;
            END LOOP;
            sect_head := brain._section_headline(array_remove(path, NULL), max_tokens);
            sect_cost := coalesce(brain.wordpiece_tokens(sect_head), 0);
            IF cur IS NOT NULL AND cur_tokens + sect_cost > max_tokens THEN
                -- (headings alone, too many for the new headline: they go as they are)
                o_body := o_body || brain.trim_space(cur);
                o_head := o_head || brain.derive_headline(brain.trim_space(cur));
                o_sect := o_sect || NULL::text;
                cur := NULL; cur_tokens := 0;
            END IF;
        END IF;
        room := max_tokens - sect_cost;
        sp := 1;
        s_text[1] := b_text[k]; s_sep[1] := E'\n\n'; s_tok[1] := NULL; s_cut[1] := b_kind[k];
        WHILE sp > 0 LOOP
            p := s_text[sp]; p_sep := s_sep[sp]; p_tok := coalesce(s_tok[sp], brain.wordpiece_tokens(s_text[sp]));
            p_cut := s_cut[sp];
            sp := sp - 1;
            -- (a NULL separator: the next part of a word cut by characters,
            -- which never shares a chunk with the part before it, as the
            -- estimates of a word's parts do not add up to the word's)
            IF cur IS NOT NULL AND p_sep IS NOT NULL AND cur_tokens + p_tok <= room THEN
                cur := cur || p_sep || p;
                cur_tokens := cur_tokens + p_tok;
                cur_content := cur_content OR b_kind[k] <> 'heading';
                CONTINUE;
            END IF;
            IF p_tok <= room THEN
                IF cur IS NOT NULL THEN
                    o_body := o_body || brain.trim_space(cur);
                    o_head := o_head || coalesce(sect_head, brain.derive_headline(brain.trim_space(cur)));
                    o_sect := o_sect || nullif(array_to_string(path, ' > '), '');
                END IF;
                cur := p;
                cur_tokens := p_tok;
                cur_content := b_kind[k] <> 'heading';
                CONTINUE;
            END IF;
            -- Too long for a chunk: cut one level finer (each level keeps the
            -- white space between its parts, so the parts add up to the piece).
            parts := NULL;
            IF p_cut IN ('code', 'open code') AND p ~ '\n'
               OR p_cut = 'text' AND p ~ '^[^\n]*\|[^\n]*\n\s*\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*(\n|$)' THEN
                -- a code block fenced again in each part, a table's header repeated
                parts := brain._split_block(string_to_array(p, E'\n'),
                                            CASE WHEN p_cut = 'text' THEN 2 ELSE 1 END, p_cut = 'code', room);
                rest_sep := E'\n\n'; rest_cut := 'line';
                IF cardinality(parts) < 2 THEN
                    parts := NULL;
                END IF;
            END IF;
            IF parts IS NULL AND p ~ '\n' THEN
                parts := string_to_array(p, E'\n');
                rest_sep := E'\n'; rest_cut := 'line';
            END IF;
            -- then at sentences, then at words: each only as a finer cut than the piece's own
            FOREACH finer IN ARRAY ARRAY['sentence', 'word'] LOOP
                CONTINUE WHEN parts IS NOT NULL OR p_cut IN ('word', 'characters') OR p_cut = finer;
                parts := regexp_split_to_array(p, CASE finer WHEN 'sentence' THEN '(?<=[.!?;:]\s+|[。！？]\s*)(?=\S)'
                                                             ELSE '(?<=\s)(?=\S)' END);
                rest_sep := ''; rest_cut := finer;
                IF cardinality(parts) < 2 THEN
                    parts := NULL;
                END IF;
            END LOOP;
            IF parts IS NULL THEN
                -- one word longer than a chunk: as many characters as fit, part by part
                parts := '{}';
                pos := 1;
                WHILE pos <= length(p) LOOP
                    m := room;
                    WHILE brain.wordpiece_tokens(substr(p, pos, m)) > room LOOP
                        m := m / 2;
                    END LOOP;
                    parts := parts || substr(p, pos, m);
                    pos := pos + m;
                END LOOP;
                rest_sep := NULL; rest_cut := 'characters';
            END IF;
            FOR q IN REVERSE cardinality(parts) .. 1 LOOP
                sp := sp + 1;
                s_text[sp] := parts[q];
                s_sep[sp] := CASE WHEN q = 1 THEN p_sep ELSE rest_sep END;
                s_tok[sp] := NULL;
                s_cut[sp] := CASE WHEN q = 1 AND rest_cut = 'characters' THEN 'characters' ELSE rest_cut END;
            END LOOP;
        END LOOP;
    END LOOP;
    IF cur IS NOT NULL THEN
        o_body := o_body || brain.trim_space(cur);
        o_head := o_head || coalesce(sect_head, brain.derive_headline(brain.trim_space(cur)));
        o_sect := o_sect || nullif(array_to_string(path, ' > '), '');
    END IF;

    RETURN QUERY
    SELECT o.n::integer, o.h, o.s, o.b
    FROM unnest(o_body, o_head, o_sect) WITH ORDINALITY AS o(b, h, s, n)
    ORDER BY o.n;
END
$$;
COMMENT ON FUNCTION brain.chunk_text IS
    'Splits text into chunks whose embedding input (headline and body) is estimated at max_tokens tokens or fewer (brain.wordpiece_tokens). Markdown-aware: a heading starts a chunk and heads it with its heading path (section); paragraphs, list runs, fenced code blocks and tables are cut only when one alone does not fit (at lines: code fenced again, table header repeated; then sentences, words, characters). Newlines are kept.';

-- The token budget of observe_batch's chunks in a space (the active one when
-- NULL): the chunk_max_tokens setting, and no more than the space's max_tokens.
CREATE OR REPLACE FUNCTION brain._chunk_tokens(space text)
RETURNS integer
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT greatest(32, least(65536, (brain.setting('chunk_max_tokens'))::integer,
        (SELECT es.max_tokens FROM brain.embedding_space es
         WHERE es.workspace_id = brain.current_workspace()
           AND CASE WHEN space IS NULL THEN es.state = 'active' ELSE es.provider || ':' || es.model = space END)))
$$;
