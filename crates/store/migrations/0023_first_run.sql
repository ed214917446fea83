-- The first-run screen (issue 24) is shown until this installation is set up: key 'first_run' = 'done' in
-- local_state. An installation that was already in use (it has a local user) counts as set up, so nobody who has
-- worked in the app sees the welcome screen after an upgrade.
INSERT OR IGNORE INTO local_state (key, value)
    SELECT 'first_run', 'done' WHERE EXISTS (SELECT 1 FROM local_state WHERE key = 'local_user');
