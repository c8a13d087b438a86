2026-11-28T20:11:41Z .gpu/simtlab flowshop solve ta022 --bound lb2 --time-limit 60 --search resident --pool 65536 --json
