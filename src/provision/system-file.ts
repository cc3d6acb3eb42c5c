// One file of /etc the provisioning writes (system-files.ts), as the Wi-Fi settings (wifi.ts) make them too.
export interface SystemFile {
  rel: string;
  text: string | undefined;
  mode: number;
  /** The service that must read it again when it changed. */
  service: string;
}
