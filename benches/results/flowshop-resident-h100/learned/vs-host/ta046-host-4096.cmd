2026-11-24T19:05:54Z .gpu/simtlab flowshop solve ta046 --search host --pool 4096 --time-limit 10 --json
