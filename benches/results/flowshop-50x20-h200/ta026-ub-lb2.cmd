2026-11-28T20:11:31Z .gpu/simtlab flowshop solve ta026 --bound lb2 --ub 2226 --time-limit 60 --search resident --pool 65536 --json
