.gpu/simtlab flowshop solve ta051 --search resident --pool 65536 --devices 1 --time-limit 20
