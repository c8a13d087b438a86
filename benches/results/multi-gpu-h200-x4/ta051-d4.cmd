.gpu/simtlab flowshop solve ta051 --search resident --pool 65536 --devices 4 --time-limit 20
