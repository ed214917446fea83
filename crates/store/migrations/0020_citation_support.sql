-- The sentences of a cited passage that support the answer (chosen by code, `assistant::support`): a JSON array of
-- [start, end] character ranges of the page. NULL for answers from before: the whole passage is the support.
ALTER TABLE assistant_citations ADD COLUMN supporting TEXT;
