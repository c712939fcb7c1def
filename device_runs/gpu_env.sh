# Sourced by the device scripts: the libraries carried in .devfull (cmocka, the OpenCL ICD
# loader, xxhash) and an ICD folder naming only NVIDIA's OpenCL, so that "OpenCL" means the GPU
# (without it the loader may pick a CPU platform: that once made OpenCL look 10x slow).
C=${C:-$PWD/.devfull/root}
L=$C/usr/lib/x86_64-linux-gnu
export LD_LIBRARY_PATH=$L:${LD_LIBRARY_PATH:-}
NV=$(find / -xdev -name 'libnvidia-opencl.so.1' 2>/dev/null | head -1)
mkdir -p /tmp/icd && echo "${NV:-libnvidia-opencl.so.1}" > /tmp/icd/nvidia.icd
export OCL_ICD_VENDORS=/tmp/icd CNC_OPENCL_LIBRARY=$L/libOpenCL.so.1
# cmocka's pkg-config file pointed at the carried copy, and the configure flags every device
# build shares (the carried headers: OpenCL, xxHash, zlib, Eigen).
mkdir -p /tmp/pc && sed "s|/usr|$C/usr|g" $L/pkgconfig/cmocka.pc > /tmp/pc/cmocka.pc
export PKG_CONFIG_PATH=/tmp/pc
CNC_DEVICE_CMAKE="-DCMAKE_BUILD_TYPE=Release -DCNC_WERROR=ON -DCNC_OPENCL_INCLUDE_DIR=$C/usr/include
  -DCNC_XXHASH_INCLUDE_DIR=$C/usr/include -DZLIB_ROOT=$C/usr -DEigen3_DIR=$C/usr/share/eigen3/cmake"
