-- wrk script: POST the Gset text in $RLSOLVER_LOAD_BODY (text/plain) to the Max-Cut solve endpoint.
local f = assert(io.open(os.getenv("RLSOLVER_LOAD_BODY"), "r"))
wrk.method = "POST"
wrk.headers["Content-Type"] = "text/plain"
wrk.body = f:read("*a")
f:close()
