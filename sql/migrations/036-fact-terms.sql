-- Each memory's distinguishing terms (brain.distinguishing_terms: numbers,
-- versions, identifiers, names), stored with it and kept by the write path
-- (trigger memory_tsv), where every search computed them again for each pair
-- of results it compared (the "older" mark: a newer memory among the results
-- differing in these terms only) and every write for each neighbour it
-- compared with. NULL: not computed (readers compute them then).
ALTER TABLE brain.memory ADD COLUMN IF NOT EXISTS fact_terms text[];
COMMENT ON COLUMN brain.memory.fact_terms IS
    'The distinguishing terms of headline and body (brain.distinguishing_terms), kept by the write path: what tells one fact from another.';

-- Existing rows: the terms brain.distinguishing_terms gives (a frozen copy:
-- migrations run before the function files).
UPDATE brain.memory m
SET fact_terms = (
    SELECT coalesce(array_agg(DISTINCT lower(w.tok) ORDER BY lower(w.tok)), '{}')
    FROM regexp_matches(coalesce(m.headline || E'\n' || m.body, ''),
                        '([^[:alnum:]]*)([[:alnum:]]+(?:[._/:@+#''-][[:alnum:]]+)*)', 'g')
             WITH ORDINALITY AS r(g, n),
         LATERAL (SELECT r.g[2] AS tok, r.n = 1 OR r.g[1] ~ '[.!?:;\n]' AS starts) AS w
    WHERE w.tok ~ '[0-9]'
       OR w.tok ~ '[[:alnum:]][_./:@#][[:alnum:]]'
       OR w.tok ~ '^[[:alpha:]].*[[:upper:]]'
       OR w.tok ~ '^[[:upper:]]' AND NOT w.starts
          AND NOT (lower(w.tok) = ANY ('{a,about,above,after,again,against,ah,all,also,although,always,am,an,and,another,any,anyone,
        anything,anyway,are,around,as,ask,at,avoid,awesome,back,be,because,been,before,being,below,best,
        better,between,both,but,by,can,cannot,check,could,did,do,does,doing,done,don''t,down,during,each,
        either,else,ensure,even,every,everyone,everything,exactly,fine,first,for,from,further,get,give,go,
        good,got,great,had,has,have,having,he,hello,her,here,here''s,hers,hey,hi,him,his,how,however,i,
        i''d,i''ll,i''m,i''ve,if,in,instead,into,is,isn''t,it,it''s,its,just,keep,last,let,let''s,like,make,
        many,may,maybe,me,might,more,most,much,must,my,need,never,new,next,no,nor,not,note,nothing,now,of,
        off,often,ok,okay,on,once,one,only,or,other,our,ours,out,over,own,perfect,please,prefer,probably,
        quite,rather,really,right,same,see,she,should,since,so,some,someone,something,sometimes,soon,
        still,such,sure,take,thank,thanks,than,that,that''s,the,their,theirs,them,then,there,there''s,these,
        they,they''re,thing,things,think,this,those,though,through,to,today,too,try,under,until,up,us,
        use,used,uses,using,usually,very,was,we,we''re,well,were,what,what''s,when,where,whether,which,
        while,who,whose,why,will,with,within,without,would,wow,yes,yet,you,you''re,your,yours,yeah,
        actually,alright,absolutely,certainly,definitely,indeed,overall,otherwise,also,both,oh,
        add,added,remove,run,runs,set,start,stop,follow,read,write,store,find,show,tell,look,want,know,
        feel,said,says,say,answer,question,user,assistant,step,steps,finally,additionally,
        furthermore,moreover,meanwhile,besides,regarding,based,given,unfortunately,hopefully,
        interesting,understood,noted,correct,true,false,yesterday,tomorrow,tonight,morning,
        monday,tuesday,wednesday,thursday,friday,saturday,sunday}'::text[])));
