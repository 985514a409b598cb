//! Downlink MISO beamforming (issue 5, first part): the tensor math lives in `beamforming`.

pub mod beamforming;
