-- size-shape-bench/ci: the suite's Python virtualenv, for the CI Slurm cluster.
-- The venv is <repo root>/.venv (created by CI, gitignored) or $SSB_VENV if set.
-- The repo root is found from this file's own path, so any clone location works.
local root = myFileName():match("^(.*)/site_configs/ci_modules/[^/]+/[^/]+$")
local venv = os.getenv("SSB_VENV") or pathJoin(root, ".venv")

whatis("Name: size-shape-bench (CI)")
whatis("Description: puts the size-shape-bench Python virtualenv on PATH")
whatis("Virtualenv: " .. venv)
help([[
Puts the size-shape-bench virtualenv (]] .. venv .. [[) first on PATH and
sets VIRTUAL_ENV, like 'source .venv/bin/activate'. Set SSB_VENV before
loading to use another virtualenv.
]])

if mode() == "load" and not isDir(pathJoin(venv, "bin")) then
    LmodError("size-shape-bench/ci: no virtualenv at " .. venv ..
              " (create it there, or set SSB_VENV)")
end
setenv("VIRTUAL_ENV", venv)
prepend_path("PATH", pathJoin(venv, "bin"))
-- as venv/bin/activate does: a PYTHONHOME would break the venv's interpreter
unsetenv("PYTHONHOME")
