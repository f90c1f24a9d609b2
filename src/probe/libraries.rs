//! The versions and providers of the cryptographic libraries this binary
//! links (liboqs and OpenSSL, both built from source and linked
//! statically), as every run file records them.

/// Version string of the linked liboqs.
pub fn liboqs_version() -> String {
    // SAFETY: OQS_version returns a pointer to a static NUL-terminated string.
    unsafe { std::ffi::CStr::from_ptr(oqs::ffi::common::OQS_version()) }
        .to_string_lossy()
        .into_owned()
}

// OpenSSL 3 functions openssl-sys does not declare; libcrypto (linked
// statically through openssl-sys) has them.
extern "C" {
    fn OSSL_PROVIDER_do_all(
        ctx: *mut openssl_sys::OSSL_LIB_CTX,
        cb: extern "C" fn(*mut openssl_sys::OSSL_PROVIDER, *mut std::ffi::c_void) -> i32,
        cbdata: *mut std::ffi::c_void,
    ) -> i32;
    fn OSSL_PROVIDER_get0_name(prov: *const openssl_sys::OSSL_PROVIDER) -> *const std::ffi::c_char;
    fn OSSL_PROVIDER_get_params(
        prov: *const openssl_sys::OSSL_PROVIDER,
        params: *mut openssl_sys::OSSL_PARAM,
    ) -> i32;
}

/// `OSSL_PARAM_UTF8_PTR` (core.h).
const OSSL_PARAM_UTF8_PTR: u32 = 6;

extern "C" fn push_provider(
    prov: *mut openssl_sys::OSSL_PROVIDER,
    out: *mut std::ffi::c_void,
) -> i32 {
    // SAFETY: `out` is the `&mut Vec<String>` `providers` passes, alive for
    // the whole OSSL_PROVIDER_do_all call; `prov` is a provider OpenSSL
    // hands us, valid during the callback.
    let out = unsafe { &mut *(out as *mut Vec<String>) };
    // SAFETY: get0_name returns a NUL-terminated string owned by the provider.
    let name = unsafe { std::ffi::CStr::from_ptr(OSSL_PROVIDER_get0_name(prov)) }
        .to_string_lossy()
        .into_owned();
    let mut version: *const std::ffi::c_char = std::ptr::null();
    let key = c"version";
    let mut params = [
        openssl_sys::OSSL_PARAM {
            key: key.as_ptr(),
            data_type: OSSL_PARAM_UTF8_PTR,
            data: (&mut version as *mut *const std::ffi::c_char).cast(),
            data_size: std::mem::size_of::<*const std::ffi::c_char>(),
            return_size: usize::MAX,
        },
        openssl_sys::OSSL_PARAM {
            key: std::ptr::null(),
            data_type: 0,
            data: std::ptr::null_mut(),
            data_size: 0,
            return_size: 0,
        },
    ];
    // SAFETY: `params` is a terminated OSSL_PARAM array whose one entry
    // points at `version`, a pointer-sized slot for a UTF8_PTR.
    let ok = unsafe { OSSL_PROVIDER_get_params(prov, params.as_mut_ptr()) } == 1;
    let version = (ok && !version.is_null())
        // SAFETY: the provider set `version` to its own NUL-terminated string.
        .then(|| {
            unsafe { std::ffi::CStr::from_ptr(version) }
                .to_string_lossy()
                .into_owned()
        });
    out.push(match version {
        Some(v) => format!("{name}={v}"),
        None => name,
    });
    1
}

/// The providers active in OpenSSL's default library context, each as
/// `name=version`, as pqcbench lists them. Fetching an algorithm first
/// makes OpenSSL load its default provider, as every measurement does.
pub fn openssl_providers() -> Vec<String> {
    let _ = openssl::hash::MessageDigest::sha256().size();
    let _ = openssl::hash::Hasher::new(openssl::hash::MessageDigest::sha256());
    let mut out: Vec<String> = vec![];
    // SAFETY: NULL is the default library context; the callback only
    // touches `out`, which outlives the call.
    unsafe {
        OSSL_PROVIDER_do_all(
            std::ptr::null_mut(),
            push_provider,
            (&mut out as *mut Vec<String>).cast(),
        )
    };
    out
}
